package journal

// ServerDSN is the test server's DSN, for the external tests.
func ServerDSN() string { return pgDSN }
