// Package scripts holds no Go code: its tests check the shell scripts
// beside them that a session with a lent GPU runs (gpu-smoke.sh,
// gpu-check.sh over gpu-lib.sh): their dry runs, and how a step's exit
// becomes PASS, FAIL, TIMEOUT or SKIP in the table.
package scripts
