"""The app's screens: main, search and editor."""
