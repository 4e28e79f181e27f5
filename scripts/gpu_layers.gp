# gpu_layers.gp - device kernel time of one training step per layer (the
# model's per-layer profile), stacked percentages per batch size.
# Variables: datafile (header row of layer names), ncols, title_text, outbase.
reset
set title title_text noenhanced
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set ylabel "% of the kernel time of one step"
set yrange [0:100]
set key outside right top noenhanced
set xtics font ",8"
# distinct colours for up to 12 layers (gnuplot's default cycle has 8)
colors = "#9400d3 #009e73 #56b4e9 #e69f00 #f0e442 #0072b2 #e51e10 #000000 #a0a0a0 #8b4513 #ff69b4 #7fff00"
set bmargin 5
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	plot for [i=2:ncols] datafile using i:xtic(1) title columnheader(i) lc rgb word(colors, 1 + (i - 2) % words(colors))
	set output
}
