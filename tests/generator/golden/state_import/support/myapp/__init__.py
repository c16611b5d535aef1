"""The state module that the state_import case names (`state: myapp.runtime:AppState`)."""
