//go:build race

package daemon

// raceDetector is true in a -race build, whose shadow memory and slower
// allocation make heap measurements meaningless and slow.
const raceDetector = true
