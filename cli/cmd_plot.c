/* rbarrier plot: the name's rounds as an SVG picture, in the spirit of
 * systemd-analyze plot: parties down the side, time across, each wait a
 * bar from the party's arrival to the round's end, the last arrival of
 * each round marked, broken rounds and breaks in red. Read only.
 *
 * The size depends only on the party count, so it can be known before
 * (doc/SEEING.md): width 1180, height 80 + parties * row, row 20 px up to
 * 32 parties and 10 px above (256 parties: 2640 px, still one readable
 * line per party). */

#include <stdio.h>
#include <string.h>

#include "history.h"

#define LABEL_W 160
#define PLOT_W 1000
#define WIDTH (LABEL_W + PLOT_W + 20)
#define TOP 40
#define BOTTOM 20

static void xml_text(const char *s, size_t max)
{
    size_t i;

    for (i = 0; s[i] && i < max; i++) {
        switch (s[i]) {
        case '<': fputs("&lt;", stdout); break;
        case '>': fputs("&gt;", stdout); break;
        case '&': fputs("&amp;", stdout); break;
        case '"': fputs("&quot;", stdout); break;
        default: putchar(s[i]);
        }
    }
    if (s[i])
        fputs("...", stdout);
}

static double x_of(const hist_view *v, long long ms)
{
    long long span = v->t1 - v->t0 > 0 ? v->t1 - v->t0 : 1;

    return LABEL_W + (double)(ms - v->t0) * PLOT_W / (double)span;
}

/* A tick every 1, 2 or 5 times a power of ten ms, about ten across. */
static long long tick_ms(long long span)
{
    long long step = 1;

    for (;;) {
        if (span / step <= 10)
            return step;
        if (span / (step * 2) <= 10)
            return step * 2;
        if (span / (step * 5) <= 10)
            return step * 5;
        step *= 10;
    }
}

static void axis(const hist_view *v, int height)
{
    long long span = v->t1 - v->t0, step = tick_ms(span > 0 ? span : 1), t;

    for (t = 0; t <= span; t += step) {
        double x = x_of(v, v->t0 + t);

        printf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
               "class=\"tick\"/>\n", x, TOP - 5, x, height - BOTTOM);
        printf("<text x=\"%.1f\" y=\"%d\" class=\"t\">%gs</text>\n", x,
               TOP - 8, (double)t / 1000);
    }
}

static void plot(const char *name, const hist_view *v)
{
    int row = v->nparties <= 32 ? 20 : 10;
    int height = TOP + (int)v->nparties * row + BOTTOM + 20;
    int font = row >= 20 ? 12 : 8;
    size_t i, k, broken = 0;

    for (i = 0; i < v->nrounds; i++)
        broken += !v->rounds[i].passed;
    printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
           "height=\"%d\" viewBox=\"0 0 %d %d\">\n", WIDTH, height, WIDTH,
           height);
    printf("<style>text{font-family:sans-serif;font-size:%dpx}"
           ".t{font-size:10px;text-anchor:middle;fill:#555}"
           ".tick{stroke:#ddd}.odd{fill:#f4f4f4}.w{fill:#6c9bd2}"
           ".wb{fill:#e57373}.last{fill:#1a1a1a}"
           ".brk{stroke:#d32f2f;stroke-width:2}</style>\n", font);
    printf("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    printf("<text x=\"10\" y=\"16\" style=\"font-size:13px\">");
    xml_text(name, 80);
    printf(": %zu rounds (%zu broken), %zu parties, %.3fs; bar: a wait, "
           "black: the round's last arrival, red: broken</text>\n",
           v->nrounds, broken, v->nparties, (double)(v->t1 - v->t0) / 1000);
    for (i = 0; i < v->nparties; i++) {
        int y = TOP + (int)i * row;

        if (i % 2)
            printf("<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "class=\"odd\"/>\n", y, WIDTH, row);
        printf("<text x=\"%d\" y=\"%d\">", 6, y + row - (row - font) / 2 - 2);
        xml_text(v->parties[i].id, 24);
        printf("</text>\n");
    }
    axis(v, height);
    for (i = 0; i < v->nrounds; i++) {
        const hist_round *r = &v->rounds[i];

        for (k = r->a0; k < r->a0 + r->na; k++) {
            double x = x_of(v, v->arr[k].ms), w = x_of(v, r->end) - x;
            int y = TOP + (int)v->arr[k].party * row;

            printf("<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                   "class=\"%s\"><title>round %lld</title></rect>\n", x,
                   y + 2, w < 1 ? 1 : w, row - 4, r->passed ? "w" : "wb",
                   r->g);
            if (k == r->a0 + r->na - 1)
                printf("<rect x=\"%.1f\" y=\"%d\" width=\"2\" height=\"%d\" "
                       "class=\"last\"/>\n", x - 1, y, row);
        }
        if (!r->passed) {
            double x = x_of(v, r->end);

            printf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                   "class=\"brk\"><title>round %lld: ", x, TOP, x,
                   height - BOTTOM, r->g);
            xml_text(r->reason ? r->reason : "broken", 300);
            printf("</title></line>\n");
        }
    }
    printf("</svg>\n");
}

int cmd_plot(int argc, char **argv)
{
    cli_config cfg = CLI_CONFIG_INIT;
    const char *name = NULL;
    hist_view v;
    int code;

    code = hist_open_cmd(argc, argv,
                         "Write the name's rounds as an SVG picture on "
                         "stdout: parties down the side,\ntime across, each "
                         "wait a bar from arrival to the round's end, each "
                         "round's\nlast arrival marked black, broken rounds "
                         "red. Changes nothing.",
                         "only its last K ended rounds", &v, &cfg, &name);
    if (code < 0) {
        plot(name, &v);
        code = CLI_EXIT_OK;
    }
    hist_free(&v);
    cli_config_free(&cfg);
    return code;
}
