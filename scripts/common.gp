# common.gp - terminals for every crossover plot (loaded by the driver that
# `xo perf report` writes). pngcairo when this gnuplot has it, else libgd png.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	png_term = "pngcairo enhanced size 960,600 font 'Sans,10'"
} else {
	png_term = "png size 960,600"
}
svg_term = "svg enhanced size 960,600 dynamic font 'Sans,10'"
set datafile missing "NaN"
