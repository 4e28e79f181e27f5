/* placeholder until perfdb/ is written */
typedef int xo_perfdb_placeholder;
