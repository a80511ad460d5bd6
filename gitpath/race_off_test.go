//go:build !race

package gitpath

const raceEnabled = false
