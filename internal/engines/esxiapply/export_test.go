package esxiapply

import "time"

// SetToolsPoll sets how often the tools wait polls, for the tests.
func SetToolsPoll(d time.Duration) { toolsPoll = d }
