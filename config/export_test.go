package config

// ReservedFilterNames lets the external tests check the filter names the loader refuses.
var ReservedFilterNames = reservedFilterNames
