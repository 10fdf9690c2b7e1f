//! Object stores named by URL: `s3://`, `gs://` and `az://` locations turned into registered
//! `object_store` clients configured from the environment, the way DataFusion's CLI does it
//! (feature `cloud`), and table URLs whose globs work on object stores as on local paths.

use datafusion::datasource::listing::ListingTableUrl;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;

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
    let store = cloud::store(scheme, bucket, location)?;
    ctx.register_object_store(url, store);
    Ok(())
}

#[cfg(feature = "cloud")]
mod cloud {
    use std::sync::Arc;

    use datafusion::error::{DataFusionError, Result};
    use object_store::ObjectStore;

    /// The client of `scheme` for `bucket`, from the environment.
    pub(super) fn store(
        scheme: &str,
        bucket: &str,
        location: &str,
    ) -> Result<Arc<dyn ObjectStore>> {
        let built: object_store::Result<Arc<dyn ObjectStore>> = match scheme {
            "s3" | "s3a" => object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map(|s| Arc::new(s) as _),
            "gs" | "gcs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map(|s| Arc::new(s) as _),
            _ => object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_container_name(bucket)
                .build()
                .map(|s| Arc::new(s) as _),
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

    pub(super) fn store(
        scheme: &str,
        _bucket: &str,
        location: &str,
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
