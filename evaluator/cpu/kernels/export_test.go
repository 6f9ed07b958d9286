package kernels

// SetConvMode forces Conv2D's algorithm: "direct", "packed", "winograd"
// (where the shape takes it), "classic" (direct or packed, never Winograd)
// or "auto". Tests use it to run every shape through each; it returns the
// previous mode.
func SetConvMode(m string) string {
	prev := [...]string{"auto", "direct", "packed", "winograd", "classic"}[convMode]
	convMode = map[string]int{"auto": modeAuto, "direct": modeDirect, "packed": modePacked,
		"winograd": modeWinograd, "classic": modeClassic}[m]
	return prev
}
