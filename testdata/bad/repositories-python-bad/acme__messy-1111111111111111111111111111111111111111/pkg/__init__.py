"""A messy repository for repoctx's bad-input tests (original code)."""
