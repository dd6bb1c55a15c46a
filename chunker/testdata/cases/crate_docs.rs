/*!
 * Ring buffer documentation line 0 with several words in it.
 * Ring buffer documentation line 1 with several words in it.
 * Ring buffer documentation line 2 with several words in it.
 * Ring buffer documentation line 3 with several words in it.
 * Ring buffer documentation line 4 with several words in it.
 * Ring buffer documentation line 5 with several words in it.
 * Ring buffer documentation line 6 with several words in it.
 * Ring buffer documentation line 7 with several words in it.
 * Ring buffer documentation line 8 with several words in it.
 * Ring buffer documentation line 9 with several words in it.
 * Ring buffer documentation line 10 with several words in it.
 * Ring buffer documentation line 11 with several words in it.
 * Ring buffer documentation line 12 with several words in it.
 * Ring buffer documentation line 13 with several words in it.
 * Ring buffer documentation line 14 with several words in it.
 * Ring buffer documentation line 15 with several words in it.
 * Ring buffer documentation line 16 with several words in it.
 * Ring buffer documentation line 17 with several words in it.
 * Ring buffer documentation line 18 with several words in it.
 * Ring buffer documentation line 19 with several words in it.
 * Ring buffer documentation line 20 with several words in it.
 * Ring buffer documentation line 21 with several words in it.
 * Ring buffer documentation line 22 with several words in it.
 * Ring buffer documentation line 23 with several words in it.
 * Ring buffer documentation line 24 with several words in it.
 * Ring buffer documentation line 25 with several words in it.
 * Ring buffer documentation line 26 with several words in it.
 * Ring buffer documentation line 27 with several words in it.
 * Ring buffer documentation line 28 with several words in it.
 * Ring buffer documentation line 29 with several words in it.
 */

use std::fmt;
use std::io;

pub fn f() -> u8 { 1 }
