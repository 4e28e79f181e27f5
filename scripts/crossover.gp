# crossover.gp - time per sample against batch size (log-log), one curve per
# device (ours and peers) with the 95% CI of each median as bars, the cl/cpu
# crossover marked and its interval shaded. Variables: prefix (data file
# prefix), devices (space-separated), xcross (0: none, <0: cl faster
# everywhere), xband_lo, xband_hi (the crossover's interval from the CIs,
# clipped to the measured range; 0: none), cl_label, title_text, outbase.
# Each device in its own colour (common.gp devcolor, the history plots' too).
# data file columns: batch s_per_sample_median ci_lo ci_hi
reset
set title title_text noenhanced
set xlabel "batch size (samples per call)"
set ylabel "time per sample (s)"
set logscale xy
set grid xtics ytics mxtics mytics
set key below horizontal
set format y "%.0e"
if (xband_lo > 0 && xband_hi > 0) {
	set object 1 rect from xband_lo, graph 0 to xband_hi, graph 1 behind fc rgb "#ffd27f" fs solid 0.35 noborder
}
if (xcross > 0) {
	set arrow 1 from xcross, graph 0 to xcross, graph 1 nohead dt 2 lw 2 lc rgb "black"
	set label 1 sprintf("crossover: cl faster above batch %.0f (shaded: 95%% CI interval %.0f-%.0f)", xcross, xband_lo, xband_hi) at xcross, graph 0.95 offset 1,0
} else {
	if (xcross < 0) {
		set label 1 "cl faster at every measured batch" at graph 0.02, graph 0.05
	} else {
		if (xband_lo > 0) {
			set label 1 sprintf("no crossover in the measured range (within the 95%% CIs: shaded, from %.0f)", xband_lo) at graph 0.02, graph 0.05
		} else {
			set label 1 "no crossover in the measured range" at graph 0.02, graph 0.05
		}
	}
}
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	plot for [i=1:words(devices)] prefix.word(devices, i).".dat" using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.8 lc rgb devcolor(word(devices, i), i) title (word(devices, i) eq "cl" ? cl_label : word(devices, i)) noenhanced
	set output
}
