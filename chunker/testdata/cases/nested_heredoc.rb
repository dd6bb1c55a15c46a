module Reports
  class Weekly
    def initialize(team)
      @team = team
    end

    def render
      <<~OUT
        Team: #{@team}
        #{
          <<~LIST.lines.map(&:strip).join(", ")
            alpha
            beta
          LIST
        }
        End of report
      OUT
    end

    def title
      "Weekly for #{@team}"
    end

    def footer
      "-- generated --"
    end
  end

  def self.build(team)
    Weekly.new(team).render
  end
end
