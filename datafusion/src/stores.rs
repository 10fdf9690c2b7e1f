//! Object stores named by URL: `s3://`, `gs://` and `az://` locations turned into registered
//! `object_store` clients configured from the environment and from options, the way
//! DataFusion's CLI does it (feature `cloud`): `aws.*`, `gcp.*` and `azure.*` options given
//! by the caller or in a `CREATE EXTERNAL TABLE ... OPTIONS (...)` statement. Also table URLs
//! whose globs work on object stores as on local paths.

use datafusion::datasource::listing::ListingTableUrl;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement;
use datafusion::sql::sqlparser::ast::Value;

/// The characters that make a location a glob.
const GLOB: [char; 3] = ['*', '?', '['];

/// Whether `location` is a URL of a store other than the local file system.
fn is_remote(location: &str) -> bool {
    location
        .split_once("://")
        .is_some_and(|(scheme, _)| scheme != "file")
}

/// The listing URL of `location`: a local path, directory or glob (DataFusion expands local
/// globs itself), or a store URL whose glob part, from the last `/` before the first glob
/// character, becomes the URL's glob (`s3://bucket/logs/*.avro` lists `logs/` and keeps the
/// objects matching `*.avro`).
///
/// # Errors
/// The location is not a valid URL or path, or its glob is invalid.
pub fn table_url(location: &str) -> Result<ListingTableUrl> {
    if !is_remote(location) {
        return ListingTableUrl::parse(location);
    }
    let Some(first) = location.find(GLOB) else {
        return ListingTableUrl::parse(location);
    };
    let cut = location[..first].rfind('/').map_or(0, |slash| slash + 1);
    let (base, pattern) = location.split_at(cut);
    if !base.contains("://") || base.ends_with("://") {
        return Err(DataFusionError::Configuration(format!(
            "{location}: a glob in the bucket name is not supported"
        )));
    }
    ListingTableUrl::parse(base)?.with_glob(pattern)
}

/// The option prefixes of the store clients, DataFusion CLI's names: `aws.` for `s3://`,
/// `gcp.` for `gs://`, `azure.` for `az://`.
const PREFIXES: [&str; 3] = ["aws.", "gcp.", "azure."];

/// Whether `key` names a store client's option (`aws.region`, `gcp.service_account_path`,
/// `azure.account_name`, ...) rather than a table's.
fn is_store_option(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Check store options before anything is registered: every key is `aws.`, `gcp.` or
/// `azure.` followed by a key of that client (in a build with the `cloud` feature; without
/// it only the prefix is checked).
///
/// # Errors
/// The first key that names no option of a store client.
pub fn validate_store_options(options: &[(String, String)]) -> Result<()> {
    for (key, _) in options {
        cloud::validate(&key.to_ascii_lowercase())?;
    }
    Ok(())
}

/// Register with `ctx` the object store `location` needs, configured from the environment:
/// for `s3://` (and `s3a://`) Amazon S3 or any S3 API (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT`,
/// `AWS_ALLOW_HTTP`, ... as `AmazonS3Builder::from_env` reads them); for `gs://` (`gcs://`)
/// Google Cloud Storage (`GOOGLE_SERVICE_ACCOUNT`, `GOOGLE_APPLICATION_CREDENTIALS`, ...); for
/// `az://` (`azure://`, `abfs://`, `abfss://`) Azure Blob Storage (`AZURE_STORAGE_ACCOUNT_NAME`,
/// `AZURE_STORAGE_ACCOUNT_KEY`, ...). One registration serves the whole bucket. Local paths,
/// `file://` and stores registered otherwise (`memory://`) need nothing and are left alone.
///
/// # Errors
/// The URL names no bucket, the scheme is a cloud store this build has no client for (built
/// without the `cloud` feature), or the store's configuration is incomplete.
pub fn register_store_for(ctx: &SessionContext, location: &str) -> Result<()> {
    register_store_with(ctx, location, &[])
}

/// [`register_store_for`] with options by DataFusion CLI's names, applied over the
/// environment: `aws.access_key_id`, `aws.secret_access_key`, `aws.session_token`,
/// `aws.region`, `aws.endpoint`, `aws.allow_http`, `aws.skip_signature`, ...;
/// `gcp.service_account_path`, `gcp.service_account_key`, `gcp.application_credentials_path`;
/// `azure.account_name`, `azure.access_key`, `azure.endpoint`, `azure.use_emulator`, ... After
/// the prefix, any key of `object_store`'s `AmazonS3ConfigKey`, `GoogleConfigKey` or
/// `AzureConfigKey` is taken (`aws.timeout`, `aws.virtual_hosted_style_request`, ...). Options
/// of another store's prefix are checked but not used. A store is registered per bucket: the
/// last registration of a bucket is the one its tables use.
///
/// # Errors
/// As [`register_store_for`], and an option that names nothing ([`validate_store_options`]).
pub fn register_store_with(
    ctx: &SessionContext,
    location: &str,
    options: &[(String, String)],
) -> Result<()> {
    validate_store_options(options)?;
    if !is_remote(location) {
        return Ok(());
    }
    let url = table_url(location)?;
    let url: &url::Url = url.as_ref();
    let scheme = url.scheme();
    if !matches!(
        scheme,
        "s3" | "s3a" | "gs" | "gcs" | "az" | "azure" | "abfs" | "abfss"
    ) {
        return Ok(());
    }
    let Some(bucket) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(DataFusionError::Configuration(format!(
            "{location}: no bucket in the URL"
        )));
    };
    let store = cloud::store(scheme, bucket, location, options)?;
    ctx.register_object_store(url, store);
    Ok(())
}

/// Register the stores a parsed statement needs, as DataFusion's CLI does before it plans
/// one: the locations of a `CREATE EXTERNAL TABLE`, configured from the environment, then
/// `options`, then the statement's own `aws.*`, `gcp.*` and `azure.*` options (which are taken
/// out of the statement: they configure the store, not the table); and the URL tables a query
/// names (`SELECT count(*) FROM 's3://bucket/x.avro'`, with `enable_url_table`), configured
/// from the environment and `options`; the target of a `COPY ... TO`, and the URL tables of
/// its query, also with the statement's own store options (taken out likewise).
///
/// # Errors
/// As [`register_store_with`]; an option value that is not a string, number or boolean; a
/// statement whose table references cannot be resolved.
pub fn register_stores_for_statement(
    ctx: &SessionContext,
    statement: &mut Statement,
    options: &[(String, String)],
) -> Result<()> {
    if let Statement::CreateExternalTable(create) = statement {
        let mut merged = options.to_vec();
        take_store_options(&mut create.options, &mut merged)?;
        validate_store_options(&merged)?;
        for location in &create.locations {
            register_store_with(ctx, location, &merged)?;
        }
        return Ok(());
    }
    let mut merged = options.to_vec();
    if let Statement::CopyTo(copy) = statement {
        // `COPY ... TO 's3://...'`: the target's store, with the statement's store options
        // (taken out, as above); the rest of the options are the format's.
        take_store_options(&mut copy.options, &mut merged)?;
        register_store_with(ctx, &copy.target, &merged)?;
    }
    let options = merged.as_slice();
    validate_store_options(options)?;
    for reference in ctx.state().resolve_table_references(statement)? {
        // A URL table is one bare name: the whole URL, quoted.
        if reference.schema().is_none() && is_remote(reference.table()) {
            register_store_with(ctx, reference.table(), options)?;
        }
    }
    Ok(())
}

/// Moves a statement's `aws.*`, `gcp.*` and `azure.*` options from `options` to `store` (as
/// text, keys in lower case): they configure the store, not the format.
fn take_store_options(
    options: &mut Vec<(String, Value)>,
    store: &mut Vec<(String, String)>,
) -> Result<()> {
    let mut kept = Vec::with_capacity(options.len());
    for (key, value) in std::mem::take(options) {
        if is_store_option(&key) {
            store.push((key.to_ascii_lowercase(), option_value(&key, &value)?));
        } else {
            kept.push((key, value));
        }
    }
    *options = kept;
    Ok(())
}

/// An option's value as text, the way DataFusion reads table options.
fn option_value(key: &str, value: &Value) -> Result<String> {
    match value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(s.clone()),
        Value::Number(n, _) => Ok(n.to_string()),
        Value::Boolean(b) => Ok(b.to_string()),
        other => Err(DataFusionError::Configuration(format!(
            "option '{key}': {other} is not a string, number or boolean"
        ))),
    }
}

#[cfg(feature = "cloud")]
mod cloud {
    use std::sync::Arc;

    use datafusion::error::{DataFusionError, Result};
    use object_store::ObjectStore;

    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};

    /// One parsed option, of the client its prefix names.
    enum Key {
        Aws(AmazonS3ConfigKey),
        Gcp(GoogleConfigKey),
        Azure(AzureConfigKey),
    }

    /// `key` (lower case) as a client's option.
    fn parse(key: &str) -> Result<Key> {
        let bad = |e: &dyn std::fmt::Display| {
            DataFusionError::Configuration(format!("store option '{key}': {e}"))
        };
        if let Some(rest) = key.strip_prefix("aws.") {
            return rest.parse().map(Key::Aws).map_err(|e| bad(&e));
        }
        if let Some(rest) = key.strip_prefix("gcp.") {
            // DataFusion CLI's name for GOOGLE_APPLICATION_CREDENTIALS.
            let rest = match rest {
                "application_credentials_path" => "application_credentials",
                other => other,
            };
            return rest.parse().map(Key::Gcp).map_err(|e| bad(&e));
        }
        if let Some(rest) = key.strip_prefix("azure.") {
            return rest.parse().map(Key::Azure).map_err(|e| bad(&e));
        }
        Err(bad(&"not an option of a store (aws.*, gcp.* or azure.*)"))
    }

    pub(super) fn validate(key: &str) -> Result<()> {
        parse(key).map(drop)
    }

    /// The client of `scheme` for `bucket`, from the environment and then `options`.
    pub(super) fn store(
        scheme: &str,
        bucket: &str,
        location: &str,
        options: &[(String, String)],
    ) -> Result<Arc<dyn ObjectStore>> {
        let keys = options
            .iter()
            .map(|(k, v)| Ok((parse(&k.to_ascii_lowercase())?, v.as_str())))
            .collect::<Result<Vec<_>>>()?;
        let built: object_store::Result<Arc<dyn ObjectStore>> = match scheme {
            "s3" | "s3a" => {
                let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
                for (key, value) in keys {
                    if let Key::Aws(key) = key {
                        b = b.with_config(key, value);
                    }
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            "gs" | "gcs" => {
                let mut b = GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
                for (key, value) in keys {
                    if let Key::Gcp(key) = key {
                        b = b.with_config(key, value);
                    }
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            _ => {
                let mut b = MicrosoftAzureBuilder::from_env().with_container_name(bucket);
                for (key, value) in keys {
                    if let Key::Azure(key) = key {
                        b = b.with_config(key, value);
                    }
                }
                b.build().map(|s| Arc::new(s) as _)
            }
        };
        built.map_err(|e| {
            DataFusionError::Configuration(format!("{location}: cannot configure the store: {e}"))
        })
    }
}

#[cfg(not(feature = "cloud"))]
mod cloud {
    use std::sync::Arc;

    use datafusion::error::{DataFusionError, Result};
    use object_store::ObjectStore;

    /// Without the clients only the prefix can be checked.
    pub(super) fn validate(key: &str) -> Result<()> {
        if super::is_store_option(key) {
            Ok(())
        } else {
            Err(DataFusionError::Configuration(format!(
                "store option '{key}': not an option of a store (aws.*, gcp.* or azure.*)"
            )))
        }
    }

    pub(super) fn store(
        scheme: &str,
        _bucket: &str,
        location: &str,
        _options: &[(String, String)],
    ) -> Result<Arc<dyn ObjectStore>> {
        Err(DataFusionError::NotImplemented(format!(
            "{location}: this build has no {scheme}:// client (avrow-datafusion's `cloud` feature)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_on_stores_become_the_urls_glob() {
        let url = table_url("s3://bucket/logs/2024-*/*.avro").unwrap();
        assert_eq!(url.as_str(), "s3://bucket/logs/");
        assert!(url.contains(&"logs/2024-01/a.avro".into(), false));
        assert!(!url.contains(&"logs/2024-01/a.json".into(), false));
        assert!(!url.contains(&"logs/2023-01/a.avro".into(), false));
        let url = table_url("s3://bucket/data/one.avro").unwrap();
        assert_eq!(url.as_str(), "s3://bucket/data/one.avro");
        assert!(table_url("s3://buck*/x.avro").is_err());
        assert!(!is_remote("data/*.avro"));
        assert!(!is_remote("file:///tmp/x.avro"));
    }

    #[test]
    fn stores_need_a_bucket_and_local_paths_need_nothing() {
        let ctx = SessionContext::new();
        register_store_for(&ctx, "data/x.avro").unwrap();
        register_store_for(&ctx, "memory://bucket/x.avro").unwrap();
        let err = register_store_for(&ctx, "s3:///x.avro").unwrap_err();
        assert!(err.to_string().contains("no bucket"), "{err}");
    }
}
