"""Adapters from a provider's tools to agent frameworks' tool types. Each imports its
framework only when called, so ``import skillbox`` needs none of them."""
