/*
 * png_ink.c — what a screenshot shows, for tests/svg_chromium.sh: reads a PNG (libpng) and
 * prints "ink N colour C total T": N pixels that differ from the white background, C of them
 * clearly coloured (their channels differ by more than 48, so not text, grid or frame, which
 * are grey), T pixels in all. With X Y W H, only the pixels of that rectangle (clipped to the
 * picture) count: so a test can ask whether one part of a picture, say the left half of a
 * panel, is painted. Exit 2 when the file is not a readable PNG or the arguments are wrong.
 * usage: png_ink FILE.png [X Y W H]
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long rect[4] = {0, 0, -1, -1}; /* x, y, w, h; -1: the whole picture */
    if (argc != 2 && argc != 6) {
        fprintf(stderr, "usage: png_ink FILE.png [X Y W H]\n");
        return 2;
    }
    for (int i = 0; argc == 6 && i < 4; i++) {
        char *end = NULL;
        rect[i] = strtol(argv[2 + i], &end, 10);
        if (!*argv[2 + i] || *end || rect[i] < 0) {
            fprintf(stderr, "png_ink: '%s' is not a pixel count\n", argv[2 + i]);
            return 2;
        }
    }
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, argv[1])) {
        fprintf(stderr, "png_ink: %s: %s\n", argv[1], img.message);
        return 2;
    }
    img.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        fprintf(stderr, "png_ink: %s: %s\n", argv[1], px ? img.message : "out of memory");
        free(px);
        png_image_free(&img);
        return 2;
    }
    size_t x0 = (size_t)rect[0], y0 = (size_t)rect[1];
    size_t x1 = rect[2] < 0 ? img.width : (size_t)(rect[0] + rect[2]), y1 = rect[3] < 0 ? img.height : (size_t)(rect[1] + rect[3]);
    if (x1 > img.width) x1 = img.width;
    if (y1 > img.height) y1 = img.height;
    size_t ink = 0, colour = 0, n = 0;
    for (size_t y = y0; y < y1; y++) {
        for (size_t x = x0; x < x1; x++, n++) {
            const unsigned char *p = px + 3 * (y * img.width + x);
            int lo = p[0], hi = p[0];
            for (int k = 1; k < 3; k++) {
                if (p[k] < lo) lo = p[k];
                if (p[k] > hi) hi = p[k];
            }
            if (lo < 248) ink++;
            if (hi - lo > 48) colour++;
        }
    }
    printf("ink %zu colour %zu total %zu\n", ink, colour, n);
    free(px);
    return 0;
}
