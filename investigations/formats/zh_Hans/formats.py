# Django groups Chinese numbers by ten thousands with no separator (1176, 3723617625): the
# figures of a technical page read as the English ones do, 1,176 and 3,723,617,625.
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
