package kernels

// SetConvMode forces Conv2D's algorithm: "direct", "packed" or "auto". Tests
// use it to run every shape through both; it returns the previous mode.
func SetConvMode(m string) string {
	prev := [...]string{"auto", "direct", "packed"}[convMode]
	convMode = map[string]int{"auto": modeAuto, "direct": modeDirect, "packed": modePacked}[m]
	return prev
}
