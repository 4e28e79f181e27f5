# gpu_split.gp - where OpenCL time goes per batch size: host enqueue, H2D,
# kernel, D2H and host wait as stacked percentages of their sum. Variables:
# datafile (header row; first column the bar label), title_text, outbase.
reset
set title title_text noenhanced
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set ylabel "% of the event times"
set yrange [0:100]
set key outside right top
set xtics font ",8"
set bmargin 5
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	plot for [i=2:6] datafile using i:xtic(1) title columnheader(i)
	set output
}
