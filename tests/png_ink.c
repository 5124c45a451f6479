/*
 * png_ink.c — what a screenshot shows, for tests/svg_chromium.sh: reads a PNG (libpng) and
 * prints "ink N colour C total T": N pixels that differ from the white background, C of them
 * clearly coloured (their channels differ by more than 48, so not text, grid or frame, which
 * are grey), T pixels in all. Exit 2 when the file is not a readable PNG.
 * usage: png_ink FILE.png
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: png_ink FILE.png\n");
        return 2;
    }
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, argv[1])) {
        fprintf(stderr, "png_ink: %s: %s\n", argv[1], img.message);
        return 2;
    }
    img.format = PNG_FORMAT_RGB;
    size_t n = (size_t)img.width * img.height;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        fprintf(stderr, "png_ink: %s: %s\n", argv[1], px ? img.message : "out of memory");
        free(px);
        png_image_free(&img);
        return 2;
    }
    size_t ink = 0, colour = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = px + 3 * i;
        int lo = p[0], hi = p[0];
        for (int k = 1; k < 3; k++) {
            if (p[k] < lo) lo = p[k];
            if (p[k] > hi) hi = p[k];
        }
        if (lo < 248) ink++;
        if (hi - lo > 48) colour++;
    }
    printf("ink %zu colour %zu total %zu\n", ink, colour, n);
    free(px);
    return 0;
}
