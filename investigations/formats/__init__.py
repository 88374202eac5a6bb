"""Number formats of our own (settings.FORMAT_MODULE_PATH), where Django's differ from what
the pages need; everything else (dates, times) stays Django's."""
