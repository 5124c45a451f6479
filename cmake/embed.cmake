# embed.cmake — turns a text file into a C source defining gm_embedded_example[] (NUL-ended).
file(READ ${IN} HEX HEX)
string(LENGTH "${HEX}" LEN)
math(EXPR NBYTES "${LEN} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," BYTES "${HEX}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" BYTES "${BYTES}")
file(WRITE ${OUT} "/* generated from examples/train_step.json by cmake/embed.cmake: do not edit */\n#include <stddef.h>\nconst char gm_embedded_example[] = {\n${BYTES}0x00};\nconst size_t gm_embedded_example_len = ${NBYTES};\n")
