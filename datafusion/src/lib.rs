//! # avrow-datafusion
//!
//! avrow as DataFusion's Avro format: SQL over Avro container files with avrow's reader.
//! Unlike DataFusion's own Avro source, files are split into byte ranges at their sync
//! markers (the Hadoop rule, so several partitions read one file and every row is read once),
//! row counts come from the block headers (`SELECT count(*)` decodes nothing), a reader schema
//! can resolve every file, and object stores are read with ranged GETs of each split, never
//! the whole object.
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
//! use datafusion::prelude::SessionContext;
//!
//! let ctx = SessionContext::new();
//! // `STORED AS AVRO` now reads with avrow.
//! avrow_datafusion::register(&ctx)?;
//! ctx.sql("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'data/'").await?;
//! // Or register files (a path, a directory or a glob) under a name.
//! ctx.register_avrow("orders", "orders/*.avro", AvrowReadOptions::default()).await?;
//! ctx.sql("SELECT count(*) FROM orders").await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Object stores (S3, GCS, Azure) are registered with the session as for any format
//! (`ctx.register_object_store(&url, store)`), or from the environment and DataFusion CLI's
//! `aws.*`/`gcp.*`/`azure.*` options by [`register_store_for`], [`register_store_with`] and,
//! for `CREATE EXTERNAL TABLE ... OPTIONS (...)`, [`register_stores_for_statement`] (feature
//! `cloud`, on by default); see `docs/sql.md`.

mod codec;
mod format;
mod nested;
mod options;
#[cfg(feature = "parquet")]
mod parquet;
mod schemas;
mod sink;
mod source;
mod staged;
mod store;
mod stores;

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{DataFrame, SessionContext};
use futures::StreamExt;
use object_store::ObjectMeta;

pub use codec::AvrowCodec;
pub use format::{AvrowFormat, AvrowFormatFactory};
pub use options::{AvrowReadOptions, AvrowWriteOptions};
#[cfg(feature = "parquet")]
pub use parquet::{ParquetCompatFormat, ParquetCompatFormatFactory};
pub use source::AvrowSource;
pub use staged::StagedLocalFiles;
pub use stores::{
    register_store_for, register_store_with, register_stores_for_statement, table_url,
    validate_store_options,
};

/// Make avrow the `avro` format of `ctx`: `CREATE EXTERNAL TABLE ... STORED AS AVRO` (and
/// every other use of the `avro` file type in that session) reads and writes with avrow.
/// With the `parquet` feature, the `parquet` format becomes `ParquetCompatFormatFactory`
/// too, so that Avro's unions, durations and empty records can be copied to Parquet. It also
/// sets the session's `skip_physical_aggregate_schema_check`, so that aggregates run over a
/// `UNION ALL` of Avro tables whose writer schemas (`avro.schema` metadata) differ.
///
/// # Errors
/// Never in practice (DataFusion's registration is fallible in general).
pub fn register(ctx: &SessionContext) -> Result<()> {
    tolerate_writer_schemas(ctx);
    let state = ctx.state_ref();
    let mut state = state.write();
    state.register_file_format(Arc::new(AvrowFormatFactory::default()), true)?;
    #[cfg(feature = "parquet")]
    state.register_file_format(Arc::new(ParquetCompatFormatFactory::new()), true)?;
    Ok(())
}

/// Let aggregates run over a `UNION ALL` of Avro tables whose writer schemas differ. Each
/// table's schema carries its file's writer schema (`avro.schema`, so that COPY writes it
/// back); DataFusion 55's logical union drops metadata the inputs do not share while its
/// physical union keeps the first input's, and the aggregate planner then refuses the
/// difference as an internal error (`SELECT count(*) FROM (SELECT * FROM a UNION ALL
/// SELECT * FROM b)`). DataFusion's `skip_physical_aggregate_schema_check` is the setting for
/// that case; names, types and nullability are still checked by the plans themselves.
fn tolerate_writer_schemas(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut state = state.write();
    state
        .config_mut()
        .options_mut()
        .execution
        .skip_physical_aggregate_schema_check = true;
}

/// The file extension filter for `path`: `.avro` when it names a directory (or a prefix),
/// none when it names a file or a glob (which says what it wants itself).
fn extension_for(path: &str) -> &'static str {
    if path.ends_with('/') || std::path::Path::new(path).is_dir() {
        ".avro"
    } else {
        ""
    }
}

/// avrow tables on a [`SessionContext`].
#[async_trait]
pub trait SessionContextAvrowExt {
    /// Register the Avro files at `path` (a file, a directory, a glob or an object store
    /// URL, globs included: `s3://bucket/logs/*.avro`) as table `name`, read by avrow with
    /// `options`. The store of a URL must be registered with the session first
    /// ([`register_store_for`] does it from the environment). Hive-style `k=v/` directories
    /// become columns; the session's `skip_physical_aggregate_schema_check` is set (see
    /// [`register`]).
    async fn register_avrow(&self, name: &str, path: &str, options: AvrowReadOptions)
        -> Result<()>;

    /// A [`DataFrame`] over the Avro files at `path`, read by avrow.
    async fn read_avrow(&self, path: &str, options: AvrowReadOptions) -> Result<DataFrame>;
}

fn listing_options(path: &str, options: AvrowReadOptions) -> ListingOptions {
    ListingOptions::new(Arc::new(AvrowFormat::new(options)))
        .with_file_extension(extension_for(path))
}

/// The files a glob whose pattern spans levels (`orders/*/*.avro`) matches, listed now, or
/// `None` for any other location. DataFusion matches a glob against the one level below its
/// prefix unless `listing_table_ignore_subdirectory` is off for the whole session; here `*`
/// stays within a level and the pattern's `/`s descend.
async fn glob_across_levels(
    ctx: &SessionContext,
    url: &ListingTableUrl,
) -> Result<Option<(Vec<ListingTableUrl>, Vec<ObjectMeta>)>> {
    let Some(glob) = url.get_glob().clone().filter(|g| g.as_str().contains('/')) else {
        return Ok(None);
    };
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let store = ctx.runtime_env().object_store(url.object_store())?;
    let base: url::Url = AsRef::<url::Url>::as_ref(&url.object_store()).clone();
    let mut listed = store.list(Some(url.prefix()));
    let mut files = Vec::new();
    while let Some(meta) = listed.next().await {
        let meta = meta?;
        let Some(relative) = url.strip_prefix(&meta.location) else {
            continue;
        };
        if glob.matches_with(&relative.collect::<Vec<_>>().join("/"), options) {
            files.push(meta);
        }
    }
    if files.is_empty() {
        return Ok(None);
    }
    files.sort_by(|a, b| a.location.cmp(&b.location));
    let urls = files
        .iter()
        .map(|meta| {
            // Segment by segment, so that `#`, `?` and `%` in names stay part of the path.
            let mut file = base.clone();
            file.path_segments_mut()
                .map_err(|()| {
                    DataFusionError::Configuration(format!("{url}: not a hierarchical URL"))
                })?
                .pop_if_empty()
                .extend(meta.location.parts().map(|p| p.as_ref().to_string()));
            let file = ListingTableUrl::try_new(file, None)?;
            Ok(match url.get_table_ref() {
                Some(table) => file.with_table_ref(table.clone()),
                None => file,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some((urls, files)))
}

/// A listing table over `url` (the files at `path`), its schema inferred (over every file).
async fn listing_table(
    ctx: &SessionContext,
    url: ListingTableUrl,
    path: &str,
    options: AvrowReadOptions,
) -> Result<Arc<ListingTable>> {
    let config = match glob_across_levels(ctx, &url).await? {
        // DataFusion infers a table of several URLs from the first one only: the schema is
        // inferred here over all of the files (merged, as for a directory).
        Some((urls, files)) => {
            let store = ctx.runtime_env().object_store(url.object_store())?;
            let schema = AvrowFormat::new(options.clone())
                .infer_schema(&ctx.state(), &store, &files)
                .await?;
            ListingTableConfig::new_with_multi_paths(urls)
                .with_listing_options(listing_options(path, options))
                .with_schema(schema)
        }
        // A file, a directory, a glob within a level, or a glob that matched nothing
        // (DataFusion's own error names the location). Hive-style partition directories
        // (`k=v/`, as `COPY ... PARTITIONED BY` writes them) become columns, as `CREATE
        // EXTERNAL TABLE` makes them (unless the session turns that off); directories that do
        // not read as partitions (mixed depths, a key the files also hold as a column) are
        // read without them.
        None => {
            let state = ctx.state();
            let plain =
                ListingTableConfig::new(url).with_listing_options(listing_options(path, options));
            let partitioned = match state
                .config_options()
                .execution
                .listing_table_factory_infer_partitions
            {
                true => match plain.clone().infer_partitions_from_path(&state).await {
                    Ok(config) => config.infer_schema(&state).await.ok().filter(|config| {
                        let keys = config
                            .options
                            .as_ref()
                            .map(|o| o.table_partition_cols.as_slice())
                            .unwrap_or_default();
                        config.file_schema.as_ref().is_some_and(|schema| {
                            keys.iter().all(|(k, _)| schema.field_with_name(k).is_err())
                        })
                    }),
                    Err(_) => None,
                },
                false => None,
            };
            match partitioned {
                Some(config) => config,
                None => plain.infer_schema(&state).await?,
            }
        }
    };
    let table = ListingTable::try_new(config)?
        .with_cache(ctx.runtime_env().cache_manager.get_file_statistic_cache());
    Ok(Arc::new(table))
}

#[async_trait]
impl SessionContextAvrowExt for SessionContext {
    async fn register_avrow(
        &self,
        name: &str,
        path: &str,
        options: AvrowReadOptions,
    ) -> Result<()> {
        tolerate_writer_schemas(self);
        let url = table_url(path)?.with_table_ref(name.into());
        let table = listing_table(self, url, path, options).await?;
        self.register_table(name, table)?;
        Ok(())
    }

    async fn read_avrow(&self, path: &str, options: AvrowReadOptions) -> Result<DataFrame> {
        tolerate_writer_schemas(self);
        let table = listing_table(self, table_url(path)?, path, options).await?;
        self.read_table(table)
    }
}
