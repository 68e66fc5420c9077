"""The isolation layer: everything that starts, confines and talks to a sandboxed worker."""
