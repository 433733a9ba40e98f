//! The packed encodings Redis serializes as one string inside an RDB value: listpacks (what
//! 7.0 writes), and the older ziplists, zipmaps and intsets it still reads. Each reader walks
//! an untrusted blob with every bound checked, so a corrupt file is refused, never trusted.

pub mod intset;
pub mod listpack;
pub mod ziplist;
pub mod zipmap;

/// One element of a packed encoding: a string, or an integer stored as a number (which
/// stands for its decimal form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// Bytes stored as they are.
    Str(&'a [u8]),
    /// An integer; its string is the canonical decimal form.
    Int(i64),
}

impl Item<'_> {
    /// The element's bytes (an integer formatted as decimal).
    pub fn to_vec(&self) -> Vec<u8> {
        match self {
            Item::Str(s) => s.to_vec(),
            Item::Int(v) => v.to_string().into_bytes(),
        }
    }

    /// Call `f` with the element's bytes, formatting an integer on the stack.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Item::Str(s) => f(s),
            Item::Int(v) => f(itoa::Buffer::new().format(*v).as_bytes()),
        }
    }
}
