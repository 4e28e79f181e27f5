# history.gp - one benchmark's history, one line per device and testbed
# (devices words are "cpu" or, across testbeds, "cpu@hostname")
# (the benchmark name without its device suffix is the group): median per run
# with its 95% CI (order statistics), the minimum as points, detected changes
# as red diamonds, over a common x axis of the runs; each device in its own
# colour (common.gp devcolor, the crossover plot's too). Variables: prefix (data
# files prefix.i.".dat", i = 1..ndev), devices (their names, space-separated),
# ndev, title_text, outbase, nchanges, npoints, logy (1: the devices differ by
# more than 10x; the axis is log either way), ylabel_text (the metric's axis label: time per
# call in ms, or instructions per call in millions).
# data file columns: idx median (ms or millions of instructions) ci_lo ci_hi min change_marker commit
reset
set datafile missing "NaN"
set title title_text noenhanced
set xlabel "run (oldest to newest; + = dirty work tree)"
if (!exists("ylabel_text")) ylabel_text = "time per call (ms)"
set ylabel ylabel_text
set grid ytics
set key below horizontal noenhanced
set xtics rotate by 45 right
# always a log axis: a step is a ratio, and it reads as the same height
# whatever the level (logy, which the driver still sets, is kept for
# scripts that read it)
set logscale y
set xrange [-0.5:npoints - 0.5]
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	if (nchanges > 0) {
		plot for [i=1:ndev] prefix.i.".dat" using 1:2:3:4:xtic(7) with yerrorlines lw 2 pt 7 ps 0.7 lc rgb devcolor(word(devices, i), i) title word(devices, i)." median (95% CI)", \
		     for [i=1:ndev] prefix.i.".dat" using 1:5 with points pt 1 ps 1.5 lw 2 lc rgb devcolor(word(devices, i), i) title word(devices, i)." run minimum", \
		     for [i=1:ndev] prefix.i.".dat" using 1:6 with points pt 12 ps 2.5 lw 2 lc rgb "red" title (i == 1 ? "change" : "")
	} else {
		plot for [i=1:ndev] prefix.i.".dat" using 1:2:3:4:xtic(7) with yerrorlines lw 2 pt 7 ps 0.7 lc rgb devcolor(word(devices, i), i) title word(devices, i)." median (95% CI)", \
		     for [i=1:ndev] prefix.i.".dat" using 1:5 with points pt 1 ps 1.5 lw 2 lc rgb devcolor(word(devices, i), i) title word(devices, i)." run minimum"
	}
	set output
}
