//! Where a value sits inside a validated JSON value, such as `content[3].mime_type`.
//!
//! The path is shared by every hand-written validator of the crate (typed results here,
//! `presentation/update` params in `services::presentation`); each of them builds its own
//! error type from [`Path::render`].

use std::fmt::Write as _;

/// Where a value sits inside the validated value: a linked list on the stack, rendered to
/// a string (`content[3].mime_type`) only when an error is built.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Path<'a> {
    /// The validated value itself.
    Root,
    /// A member of the object at the parent path.
    Key(&'a Path<'a>, &'a str),
    /// An element of the array at the parent path.
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The path of member `key` below this one.
    pub(crate) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    /// The path of element `index` below this one.
    pub(crate) fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }

    /// The path as text, such as `items[0].items[2].command`: members joined by `.`,
    /// elements as `[index]`, and the empty string for the root.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }

    fn write_to(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.write_to(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, index) => {
                parent.write_to(out);
                let _ = write!(out, "[{index}]");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_members_and_indices() {
        let root = Path::Root;
        let content = root.key("content");
        let third = content.index(3);
        let mime = third.key("mime_type");
        assert_eq!(mime.render(), "content[3].mime_type");
        let first = root.index(0);
        assert_eq!(first.key("placement").render(), "[0].placement");
        assert_eq!(root.render(), "");
    }

    #[test]
    fn nested_members_join_with_dots() {
        let root = Path::Root;
        let snapshot = root.key("snapshot");
        let nodes = snapshot.key("nodes");
        let third = nodes.index(3);
        assert_eq!(
            third.key("parent_id").render(),
            "snapshot.nodes[3].parent_id"
        );
        assert_eq!(root.render(), "");
    }
}
