//! Crate docs for the ring buffer.
//! More docs here.

use std::fmt;

pub struct Ring {
    buf: Vec<u8>,
}

unsafe extern "C" {
    pub safe fn abs(x: i32) -> i32;
    pub unsafe fn strlen(p: *const u8) -> usize;
}

#[unsafe(no_mangle)]
pub extern "C" fn exported() -> u32 {
    7
}

fn captures<'a>(x: &'a u8) -> impl Sized + use<'a> {
    x
}

fn raw_ptr(v: &mut u8) -> *mut u8 {
    &raw mut *v
}

fn chains(a: Option<u8>, b: Option<u8>) -> u8 {
    if let Some(x) = a && let Some(y) = b {
        return x + y;
    }
    0
}

async fn runner() {
    let f = async |x: u8| x + 1;
    let g = gen { yield 1; };
}

impl Ring {
    pub fn new() -> Self {
        Ring { buf: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }
}

pub fn after() -> u8 {
    1
}
