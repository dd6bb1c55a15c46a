//go:build !linux

package store

// mapPopulate is 0 where mmap has no MAP_POPULATE: pages are read as they are touched.
const mapPopulate = 0
