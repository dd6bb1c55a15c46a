require 'json'
require_relative '../lib/foo'

# Doc.
module Acme
  class Foo < Bar
    include Comparable
    attr_reader :x

    def initialize(x)
      @x = x
    end

    # comment
    def self.make(a) = new(a)

    private

    def helper
      1
    end
  end

  class Baz
    class << self
      def build; end
    end
  end
end

def top(a, b)
  a + b
end
