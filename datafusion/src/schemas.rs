//! What a format learns of its files and keeps for its later steps. The Arrow schemas by
//! writer schema ([`SchemaCache`]): the files of one table mostly share a writer schema, and
//! turning one into Arrow builds a whole decode plan, so each distinct writer schema is turned
//! into Arrow once, not once per file and again per split. And, for small local files, where
//! each file is and what its header and block headers said ([`FileFacts`]), so that the
//! statistics and the scan of a file whose schema was inferred neither ask the store where it
//! is nor read its headers again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use object_store::{ObjectMeta, ObjectStore};

/// Distinct writer schemas kept at most: past that, schemas are still given but no longer
/// kept (files with thousands of writer schemas each pay for their own, as before).
const MAX_SCHEMAS: usize = 64;

/// Arrow schemas by writer schema JSON, for one set of read options (the cache belongs to
/// the format or source that holds those options).
#[derive(Default, Debug)]
pub(crate) struct SchemaCache {
    schemas: Mutex<HashMap<Arc<str>, SchemaRef>>,
}

impl SchemaCache {
    /// The Arrow schema of files written with `writer` (its JSON, as the header holds it),
    /// made by `make` the first time.
    pub(crate) fn get_or_make(
        &self,
        writer: &str,
        make: impl FnOnce() -> Result<SchemaRef>,
    ) -> Result<SchemaRef> {
        let lock = || self.schemas.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(schema) = lock().get(writer) {
            return Ok(Arc::clone(schema));
        }
        // Made outside the lock: two openers of a new schema may both make it, which costs
        // time once, where holding the lock would stall every other file's opening.
        let schema = make()?;
        let mut schemas = lock();
        if schemas.len() < MAX_SCHEMAS {
            schemas.insert(Arc::from(writer), Arc::clone(&schema));
        }
        Ok(schema)
    }
}

/// Files whose facts are kept at most (about 250 bytes each): past that, files are located
/// and read again at each step, as before.
const MAX_FILES: usize = 1 << 16;

/// A file version in a store: the store (by address: a format's tables may span stores),
/// and the object's location, size, entity tag and modification time (microseconds).
pub(crate) type FileKey = (usize, object_store::path::Path, u64, Option<String>, i64);

/// The key of `meta` in `store`.
pub(crate) fn file_key(store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> FileKey {
    (
        Arc::as_ptr(store) as *const () as usize,
        meta.location.clone(),
        meta.size,
        meta.e_tag.clone(),
        meta.last_modified.timestamp_micros(),
    )
}

/// What schema inference learned of a small local file.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    /// Where the store keeps it.
    pub(crate) path: PathBuf,
    /// Its Arrow schema as the format reads it.
    pub(crate) schema: SchemaRef,
    /// Its rows, from its block headers (`None` where they could not be counted: the
    /// statistics then count again, and report what they find).
    pub(crate) rows: Option<u64>,
    /// Its codec: only an uncompressed file is decoded in place by a scan (a small
    /// compressed one may inflate to a block of a gigabyte, too long for a runtime thread).
    pub(crate) codec: avrow::Codec,
}

/// Small local files a format has inferred the schema of, by file version.
#[derive(Default, Debug)]
pub(crate) struct FileFacts {
    files: Mutex<HashMap<FileKey, Known>>,
}

impl FileFacts {
    /// Keep what was learned of `key`'s file.
    pub(crate) fn insert(&self, key: FileKey, known: Known) {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if files.len() < MAX_FILES || files.contains_key(&key) {
            files.insert(key, known);
        }
    }

    /// What was learned of `key`'s file, if anything.
    pub(crate) fn get(&self, key: &FileKey) -> Option<Known> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files.get(key).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field, Schema};

    #[test]
    fn a_schema_is_made_once_and_the_cache_stays_bounded() {
        let cache = SchemaCache::default();
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let mut made = 0;
        for _ in 0..3 {
            let got = cache
                .get_or_make("\"long\"", || {
                    made += 1;
                    Ok(Arc::clone(&schema))
                })
                .unwrap();
            assert_eq!(got, schema);
        }
        assert_eq!(made, 1);
        // An error is returned and nothing is kept.
        assert!(cache
            .get_or_make("\"int\"", || Err(datafusion::error::DataFusionError::Plan(
                "no".into()
            )))
            .is_err());
        for i in 0..2 * MAX_SCHEMAS {
            let json = format!("{{\"type\": \"fixed\", \"size\": {i}, \"name\": \"f\"}}");
            cache
                .get_or_make(&json, || Ok(Arc::clone(&schema)))
                .unwrap();
        }
        assert_eq!(cache.schemas.lock().unwrap().len(), MAX_SCHEMAS);
    }
}
