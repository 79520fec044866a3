//! JSON Pointer (RFC 6901) paths for error messages.

/// `path` extended by the reference token `token`, with `~` written `~0` and `/` written
/// `~1`.
pub(crate) fn child_path(path: &str, token: &str) -> String {
    let mut out = String::with_capacity(path.len() + token.len() + 1);
    out.push_str(path);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// Where the validator is in the instance: a borrowed chain from the current value back
/// to the root, rendered to a pointer only when an error is reported.
#[derive(Clone, Copy, Debug)]
pub(crate) enum InstancePath<'a> {
    /// The instance itself.
    Root,
    /// Member `name` of the object at the parent path.
    Member(&'a InstancePath<'a>, &'a str),
    /// Element `index` of the array at the parent path.
    Element(&'a InstancePath<'a>, usize),
}

impl InstancePath<'_> {
    /// The path as a JSON Pointer.
    pub(crate) fn render(&self) -> String {
        match self {
            InstancePath::Root => String::new(),
            InstancePath::Member(parent, name) => child_path(&parent.render(), name),
            InstancePath::Element(parent, index) => {
                child_path(&parent.render(), &index.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped() {
        assert_eq!(child_path("", "a"), "/a");
        assert_eq!(child_path("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(child_path("/a", ""), "/a/");
    }

    #[test]
    fn instance_paths_render_from_the_root() {
        let root = InstancePath::Root;
        let sources = InstancePath::Member(&root, "sources");
        let first = InstancePath::Element(&sources, 0);
        let url = InstancePath::Member(&first, "url");
        assert_eq!(root.render(), "");
        assert_eq!(url.render(), "/sources/0/url");
    }
}
