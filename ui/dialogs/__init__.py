"""Modal dialogs: choices and prompts."""
