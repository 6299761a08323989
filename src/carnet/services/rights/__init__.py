"""The data subject's rights and their rules: erasure, export, rectification, legal hold."""
