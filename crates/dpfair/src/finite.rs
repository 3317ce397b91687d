//! Finds the first non-finite number (NaN, ±∞) in anything serde can serialize, by its path
//! (`model.weights[2]`): JSON writes such a number as `null`, which no model reads back, so the
//! model-file writer refuses it ([`crate::model::ModelFile::new`]; docs/privacy.md, "Model
//! files").

use serde::ser::{self, Serialize};
use std::fmt;

/// The path of the first non-finite `f32`/`f64` in `value`, if any.
pub fn first_non_finite<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    let mut walker = Walker { path: Vec::new() };
    match value.serialize(&mut walker) {
        Err(Found(path)) => Some(path),
        Ok(()) => None,
    }
}

/// The error that stops the walk: the path of the non-finite number (or a serializer's own
/// error message, which cannot happen for derived impls).
#[derive(Debug)]
struct Found(String);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Found(format!("(a value that does not serialize: {msg})"))
    }
}

struct Walker {
    path: Vec<String>,
}

impl Walker {
    fn float(&self, x: f64) -> Result<(), Found> {
        if x.is_finite() {
            Ok(())
        } else {
            Err(Found(self.path.concat()))
        }
    }

    fn nested<T: Serialize + ?Sized>(&mut self, step: String, v: &T) -> Result<(), Found> {
        self.path.push(step);
        v.serialize(&mut *self)?;
        self.path.pop();
        Ok(())
    }
}

/// Every scalar but a float is fine.
macro_rules! fine {
    ($($name:ident: $t:ty),* $(,)?) => {
        $(fn $name(self, _: $t) -> Result<(), Found> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Seq<'a>;
    type SerializeStruct = Seq<'a>;
    type SerializeStructVariant = Seq<'a>;

    fine!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str);

    fn serialize_f32(self, v: f32) -> Result<(), Found> {
        self.float(v as f64)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Found> {
        self.float(v)
    }
    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.nested(format!(".{variant}"), v)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Found> {
        Ok(Seq { w: self, i: 0 })
    }
}

/// Any compound value: elements are named by index, fields by name.
struct Seq<'a> {
    w: &'a mut Walker,
    i: usize,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        let step = format!("[{}]", self.i);
        self.i += 1;
        self.w.nested(step, v)
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Found> {
        self.w.nested(format!(".{key}"), v)
    }
}

/// The seven compound traits, all walking elements or fields the same way.
macro_rules! compound {
    ($($tr:ident: $method:ident),* $(,)?) => {
        $(impl ser::$tr for Seq<'_> {
            type Ok = ();
            type Error = Found;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
                self.element(v)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        })*
    };
}

compound!(
    SerializeSeq: serialize_element,
    SerializeTuple: serialize_element,
    SerializeTupleStruct: serialize_field,
    SerializeTupleVariant: serialize_field,
);

impl ser::SerializeMap for Seq<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Found> {
        k.serialize(&mut *self.w)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        self.element(v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStruct for Seq<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Seq<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct M {
        a: f64,
        w: Vec<f64>,
        o: Option<f64>,
    }

    #[test]
    fn finds_the_first_non_finite_number_by_path() {
        let ok = M {
            a: 1.0,
            w: vec![0.5],
            o: None,
        };
        assert_eq!(first_non_finite(&ok), None);
        let bad = M {
            a: 1.0,
            w: vec![0.5, f64::NAN],
            o: None,
        };
        assert_eq!(first_non_finite(&bad).as_deref(), Some(".w[1]"));
        let inf = M {
            a: 1.0,
            w: vec![],
            o: Some(f64::INFINITY),
        };
        assert_eq!(first_non_finite(&inf).as_deref(), Some(".o"));
    }
}
