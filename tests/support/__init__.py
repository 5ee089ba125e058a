"""What the tests share (and the benches reuse): local servers (test pages and the corpus,
a stand-in shop, an OpenAI-compatible endpoint with a scripted model), hypothesis strategies,
scripted models and the helpers that read what a model is shown, reference readings of the
corpus. No test module imports another; they import from here."""
