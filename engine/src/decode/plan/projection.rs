//! Projection paths as a tree, and the errors for paths into values that have no fields.

use super::{join, Compiler};
use crate::error::PlanError;
use std::collections::BTreeMap;

/// A projection tree. `whole` selects the whole subtree; `children` are the named sub-paths,
/// kept even under a whole selection so that every given path is checked against the schema.
#[derive(Debug, Clone, Default)]
pub(super) struct Proj {
    pub(super) whole: bool,
    pub(super) children: BTreeMap<String, Proj>,
}

impl Proj {
    pub(super) fn from_paths(paths: &[String]) -> Proj {
        let mut root = Proj::default();
        for path in paths {
            let mut node = &mut root;
            for part in path.split('.') {
                node = node.children.entry(part.to_string()).or_default();
            }
            node.whole = true;
        }
        root
    }

    /// The projection of child `name`: `None` means "everything" (no sub-paths to check).
    pub(super) fn child(&self, name: &str) -> Option<Option<Proj>> {
        match self.children.get(name) {
            Some(c) => Some(Some(Proj {
                whole: c.whole || self.whole,
                children: c.children.clone(),
            })),
            None if self.whole => Some(None),
            None => None,
        }
    }

    /// A selection with no sub-paths selects the whole subtree.
    pub(super) fn is_everything(&self) -> bool {
        self.whole && self.children.is_empty()
    }
}

impl Compiler<'_> {
    pub(super) fn no_subfields(
        &self,
        proj: Option<&Proj>,
        path: &str,
        what: &str,
    ) -> Result<(), PlanError> {
        match proj.and_then(|p| p.children.keys().next()) {
            Some(sub) => Err(PlanError::UnknownField {
                path: join(path, sub),
                hint: format!(" ({path} is {what}, which has no fields)"),
            }),
            None => Ok(()),
        }
    }

    pub(super) fn no_branch_projection(
        &self,
        proj: Option<&Proj>,
        path: &str,
    ) -> Result<(), PlanError> {
        if proj.is_some_and(|p| !p.children.is_empty()) {
            return Err(PlanError::UnknownField {
                path: path.to_string(),
                hint: " (projection into the branches of a union is not supported; select the whole field)".into(),
            });
        }
        Ok(())
    }
}
