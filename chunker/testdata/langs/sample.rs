use std::collections::HashMap;
use crate::model::{Issue, Label as L};
use super::util::*;
mod inner;

/// Doc.
#[derive(Debug)]
pub struct Foo<T> {
    a: T,
}

impl<T> Foo<T> where T: Clone {
    /// new
    pub fn new(a: T) -> Self {
        Foo { a }
    }
    fn get(&self) -> &T { &self.a }
}

pub trait Tr { fn m(&self); }
pub enum E { A, B(i32) }
const C: i32 = 1;
static S: &str = "x";
type Alias = i32;
macro_rules! mac { () => {} }
pub mod m {
    pub fn f() {}
}
