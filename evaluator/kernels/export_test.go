package kernels

// SetConvMode forces Conv2D's algorithm: "direct", "gather" or "auto". Tests
// use it to run every shape through both; it returns the previous mode.
func SetConvMode(m string) string {
	prev := [...]string{"auto", "direct", "gather"}[convMode]
	convMode = map[string]int{"auto": modeAuto, "direct": modeDirect, "gather": modeGather}[m]
	return prev
}
