//go:build race

package gitpath

// raceEnabled: the race detector makes writing thousands of loose objects
// slow, so the oracle test runs fewer generated paths under it.
const raceEnabled = true
