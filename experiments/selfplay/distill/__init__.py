"""Distilling decision-time search into the policy (issue 24): labels, fine-tuning."""
