package browser

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// tilePNG is a 256x256 light-grey tile with a darker grid line, a stand-in
// for a real tile server's answer.
var tilePNG = func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			c := color.NRGBA{R: 236, G: 236, B: 230, A: 255}
			if x == 0 || y == 0 {
				c = color.NRGBA{R: 200, G: 200, B: 195, A: 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()
