/* tools/plot.h - gnuplot SVG plots for the HTML reports, and the little HTML they sit in.
 *
 * A plot_dir is a private temporary directory (under $TMPDIR, default /tmp) that holds a plot's
 * data files and gnuplot script; plot_run runs gnuplot there (its working directory, so scripts
 * name files relatively), and plot_inline_svg copies the SVG it made into an HTML page from its
 * <svg> element on (no XML prolog), so the page is one self-contained file: no script, no
 * stylesheet and no image is fetched from anywhere. Every file made here is registered with
 * tools/cleanup.h, so an interrupted run leaves none behind; plot_dir_close removes them all.
 * gnuplot's SVG terminal is used without `mouse` (which would reference gnuplot's JavaScript
 * file) and with noenhanced text (class names keep their underscores).
 * Ownership: a plot_dir owns its paths (plot_dir_close frees it); FILEs from plot_file are
 * closed by plot_run / plot_dir_close. No units.
 */
#ifndef SIMPROJ_TOOLS_PLOT_H
#define SIMPROJ_TOOLS_PLOT_H

#include <stdio.h>

typedef struct plot_dir plot_dir;

/* Make the temporary directory. NULL (message printed) on failure. */
plot_dir *plot_dir_open(void);
/* Create (truncate) file `name` in the directory for writing. NULL (message printed) on
 * failure. The FILE belongs to the directory. */
FILE *plot_file(plot_dir *p, const char *name);
/* Close every open file, then run `gnuplot SCRIPT` in the directory. 0; SIM_EIO when gnuplot
 * cannot be started or fails (its messages printed, with what to install). */
int plot_run(plot_dir *p, const char *script);
/* Copy the SVG file `name` (made by plot_run) into f from its "<svg" on. 0 or SIM_EIO. */
int plot_inline_svg(plot_dir *p, const char *name, FILE *f);
/* Remove every file and the directory; frees p. NULL is a no-op. */
void plot_dir_close(plot_dir *p);

/* The gnuplot lines every report plot starts with: SVG of width x height pixels, no enhanced
 * text, a light grid. */
void plot_header(FILE *script, const char *svg_name, int width, int height);
/* A gnuplot string literal's body: s with '"' and '\\' dropped (names stay readable). */
void plot_string(FILE *script, const char *s);

/* HTML text with &, <, >, " escaped. */
void html_text(FILE *f, const char *s);
/* The page's opening (doctype, head with an inline stylesheet, title, h1) and closing. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);

#endif
