"""nbgraph: build a state graph in a notebook, run it, and see what every reducer did."""
