package probe

// ReturnedBy is returnedBy for the external tests of the package.
var ReturnedBy = returnedBy
