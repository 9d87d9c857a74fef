package booblik

// Test-only exports for the external test package.
var ReadVectors = readVectors
