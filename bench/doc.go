// Package bench holds the side-by-side benchmarks of TGP against its
// references (the git CLI, the TypeScript original's published numbers).
// Run them with `make bench`; each reference runs in the same benchmark
// run so ratios are taken on the same machine at the same time.
package bench
