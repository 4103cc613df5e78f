// Intentionally empty until the library has sources; keeps the static library non-empty.
