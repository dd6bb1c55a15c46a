package store

import "syscall"

// mapPopulate asks mmap to read the whole file in at once (MAP_POPULATE): a view
// file is read whole right after it is mapped.
const mapPopulate = syscall.MAP_POPULATE
