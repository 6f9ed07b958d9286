package kernels

// SetConvMode forces Conv2D's algorithm: "direct", "packed", "winograd"
// (wherever the variant can compute the shape, faster or not: a 3×3 or
// 5×5 stride-1 filter), "classic" (direct or packed, never Winograd) or
// "auto". Tests use it to run every shape through each; it returns the
// previous mode.
func SetConvMode(m string) string {
	prev := [...]string{"auto", "direct", "packed", "winograd", "classic"}[convMode]
	wgAlways = m == "winograd"
	convMode = map[string]int{"auto": modeAuto, "direct": modeDirect, "packed": modePacked,
		"winograd": modeWinograd, "classic": modeClassic}[m]
	return prev
}
